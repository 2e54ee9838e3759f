package bidbench.db;

/** One statement of contract/queries.sql: its name (for logs) and its text. */
public record Sql(String name, String text) {}
