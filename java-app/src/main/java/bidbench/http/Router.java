package bidbench.http;

/**
 * Matches the raw request path (no percent-decoding, no normalization) against the routes. A trailing
 * slash, a doubled slash or an empty segment matches nothing; {id} is any one non-empty segment and is
 * validated later (contract step 4).
 */
public final class Router {

    /** A matched route and its raw {id} segment (null for routes without one). */
    public record Match(Route route, String rawId) {}

    private Router() {}

    /** The match, or null for an unknown route. */
    public static Match match(String rawPath) {
        if (rawPath == null || rawPath.isEmpty() || rawPath.charAt(0) != '/') {
            return null;
        }
        String[] segments = rawPath.substring(1).split("/", -1);
        switch (segments.length) {
            case 1:
                return fixed(segments[0]);
            case 2:
                if (segments[1].isEmpty()) {
                    return null;
                }
                return switch (segments[0]) {
                    case "items" -> new Match(Route.ITEM, segments[1]);
                    case "users" -> new Match(Route.USER, segments[1]);
                    default -> null;
                };
            case 3:
                if (segments[1].isEmpty()) {
                    return null;
                }
                if (segments[0].equals("categories") && segments[2].equals("items")) {
                    return new Match(Route.CATEGORY_ITEMS, segments[1]);
                }
                if (segments[0].equals("items") && segments[2].equals("bids")) {
                    return new Match(Route.ITEM_BIDS, segments[1]);
                }
                return null;
            default:
                return null;
        }
    }

    private static Match fixed(String segment) {
        Route route = switch (segment) {
            case "health" -> Route.HEALTH;
            case "ready" -> Route.READY;
            case "regions" -> Route.REGIONS;
            case "categories" -> Route.CATEGORIES;
            case "items" -> Route.ITEMS;
            case "users" -> Route.USERS;
            default -> null;
        };
        return route == null ? null : new Match(route, null);
    }
}
