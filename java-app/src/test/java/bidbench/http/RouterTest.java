package bidbench.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RouterTest {

    @Test
    void matchesEveryRoute() {
        assertEquals(new Router.Match(Route.HEALTH, null), Router.match("/health"));
        assertEquals(new Router.Match(Route.READY, null), Router.match("/ready"));
        assertEquals(new Router.Match(Route.REGIONS, null), Router.match("/regions"));
        assertEquals(new Router.Match(Route.CATEGORIES, null), Router.match("/categories"));
        assertEquals(new Router.Match(Route.CATEGORY_ITEMS, "7"), Router.match("/categories/7/items"));
        assertEquals(new Router.Match(Route.ITEMS, null), Router.match("/items"));
        assertEquals(new Router.Match(Route.ITEM, "abc"), Router.match("/items/abc"));
        assertEquals(new Router.Match(Route.ITEM_BIDS, "%31"), Router.match("/items/%31/bids"));
        assertEquals(new Router.Match(Route.USERS, null), Router.match("/users"));
        assertEquals(new Router.Match(Route.USER, "1;x"), Router.match("/users/1;x"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "/", "*", "health", "/health/", "//health", "/Health", "/items/", "/items//bids",
        "/items/1/", "/items/1/bids/", "/categories//items", "/categories/1", "/users/1/x", "/items/1/bids/2",
        "/regions/1", "/health%2F", "/%68ealth"})
    void unknownRoutes(String path) {
        assertNull(Router.match(path));
    }

    @Test
    void nullPath() {
        assertNull(Router.match(null));
    }

    @Test
    void allowHeadersInContractOrder() {
        assertEquals("GET, PUT, DELETE", Route.ITEM.allow());
        assertEquals("GET, POST", Route.ITEM_BIDS.allow());
        assertEquals("POST", Route.USERS.allow());
        assertEquals("GET", Route.HEALTH.allow());
    }
}
