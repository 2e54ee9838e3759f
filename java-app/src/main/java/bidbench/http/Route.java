package bidbench.http;

import java.util.List;

/** The routes of contract/README.md, with their methods in {@code Allow} order. */
public enum Route {
    HEALTH("GET"),
    READY("GET"),
    REGIONS("GET"),
    CATEGORIES("GET"),
    CATEGORY_ITEMS("GET"),
    ITEMS("POST"),
    ITEM("GET", "PUT", "DELETE"),
    ITEM_BIDS("GET", "POST"),
    USERS("POST"),
    USER("GET");

    private final List<String> methods;
    private final String allow;

    Route(String... methods) {
        this.methods = List.of(methods);
        this.allow = String.join(", ", methods);
    }

    public List<String> methods() {
        return methods;
    }

    /** The {@code Allow} header of a 405 on this route. */
    public String allow() {
        return allow;
    }
}
