package bidbench.model;

public record Category(int id, String name) {}
