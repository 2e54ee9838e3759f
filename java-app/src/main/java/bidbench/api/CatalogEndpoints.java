package bidbench.api;

import bidbench.db.Database;
import bidbench.db.DbSession;
import bidbench.db.Rows;
import bidbench.http.Reply;
import bidbench.json.JsonViews;
import bidbench.model.Category;
import bidbench.model.Region;
import java.sql.SQLException;
import java.util.List;

/** GET /regions and GET /categories. */
final class CatalogEndpoints {

    private final Database database;

    CatalogEndpoints(Database database) {
        this.database = database;
    }

    Reply regions(Call call) throws SQLException {
        List<Region> regions;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            regions = db.list(database.queries().listRegions(), DbSession.NO_PARAMETERS, Rows::region);
        }
        return Reply.ok(JsonViews.regions(regions));
    }

    Reply categories(Call call) throws SQLException {
        List<Category> categories;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            categories = db.list(database.queries().listCategories(), DbSession.NO_PARAMETERS, Rows::category);
        }
        return Reply.ok(JsonViews.categories(categories));
    }
}
