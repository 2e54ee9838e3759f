package bidbench.api;

import bidbench.db.Database;
import bidbench.db.DbSession;
import bidbench.db.Queries;
import bidbench.http.Reply;
import bidbench.json.JsonViews;
import java.sql.SQLException;

/** GET /health (never touches the database) and GET /ready (SELECT 1). */
final class HealthEndpoints {

    private final Database database;

    HealthEndpoints(Database database) {
        this.database = database;
    }

    Reply health(Call call) {
        return Reply.ok(JsonViews.health());
    }

    Reply ready(Call call) throws SQLException {
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            db.exists(Queries.READY, DbSession.NO_PARAMETERS);
        }
        return Reply.ok(JsonViews.ready());
    }
}
