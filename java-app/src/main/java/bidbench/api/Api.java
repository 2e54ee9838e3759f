package bidbench.api;

import bidbench.db.Database;
import bidbench.http.Route;
import bidbench.validation.Schema;
import java.util.EnumMap;
import java.util.Map;

/** The endpoint table: which code answers which route and method. */
public final class Api {

    private final Map<Route, Map<String, Endpoint>> endpoints = new EnumMap<>(Route.class);

    public Api(Database database) {
        HealthEndpoints health = new HealthEndpoints(database);
        CatalogEndpoints catalog = new CatalogEndpoints(database);
        ItemEndpoints items = new ItemEndpoints(database);
        BidEndpoints bids = new BidEndpoints(database);
        UserEndpoints users = new UserEndpoints(database);

        endpoints.put(Route.HEALTH, Map.of("GET", Endpoint.plain(health::health)));
        endpoints.put(Route.READY, Map.of("GET", Endpoint.plain(health::ready)));
        endpoints.put(Route.REGIONS, Map.of("GET", Endpoint.plain(catalog::regions)));
        endpoints.put(Route.CATEGORIES, Map.of("GET", Endpoint.plain(catalog::categories)));
        endpoints.put(Route.CATEGORY_ITEMS, Map.of("GET", Endpoint.paged(items::listCategoryItems)));
        endpoints.put(Route.ITEMS, Map.of("POST", Endpoint.withBody(Schema.ITEM_CREATE, items::create)));
        endpoints.put(Route.ITEM, Map.of(
                "GET", Endpoint.plain(items::get),
                "PUT", Endpoint.withBody(Schema.ITEM_UPDATE, items::update),
                "DELETE", Endpoint.plain(items::delete)));
        endpoints.put(Route.ITEM_BIDS, Map.of(
                "GET", Endpoint.paged(bids::list),
                "POST", Endpoint.withBody(Schema.BID_CREATE, bids::place)));
        endpoints.put(Route.USERS, Map.of("POST", Endpoint.withBody(Schema.USER_CREATE, users::create)));
        endpoints.put(Route.USER, Map.of("GET", Endpoint.plain(users::get)));

        for (Route route : Route.values()) {
            if (!endpoints.containsKey(route) || !endpoints.get(route).keySet().containsAll(route.methods())
                    || endpoints.get(route).size() != route.methods().size()) {
                throw new IllegalStateException("endpoint table does not match route " + route);
            }
        }
    }

    /** The endpoint, or null when the route does not serve the method. Methods are case-sensitive. */
    public Endpoint find(Route route, String method) {
        return endpoints.get(route).get(method);
    }
}
