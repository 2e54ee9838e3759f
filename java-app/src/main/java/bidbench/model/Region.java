package bidbench.model;

public record Region(int id, String name) {}
