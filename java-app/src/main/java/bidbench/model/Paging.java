package bidbench.model;

/** A validated page request of a list endpoint. */
public record Paging(int limit, int offset) {
    public static final Paging DEFAULT = new Paging(20, 0);
}
