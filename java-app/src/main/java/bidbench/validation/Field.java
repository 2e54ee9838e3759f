package bidbench.validation;

public record Field(String name, FieldType type) {}
