package bidbench.api;

import bidbench.db.Database;
import bidbench.db.DbSession;
import bidbench.db.Queries;
import bidbench.db.Rows;
import bidbench.db.SqlErrors;
import bidbench.http.Errors;
import bidbench.http.Reply;
import bidbench.json.JsonViews;
import bidbench.model.User;
import bidbench.validation.Body;
import java.sql.SQLException;

/** GET /users/{id} and POST /users. */
final class UserEndpoints {

    private final Database database;

    UserEndpoints(Database database) {
        this.database = database;
    }

    Reply get(Call call) throws SQLException {
        User user;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            user = db.one(Queries.GET_USER, statement -> statement.setInt(1, call.id()), Rows::user);
        }
        if (user == null) {
            throw Errors.notFound("user not found");
        }
        return Reply.ok(JsonViews.user(user));
    }

    Reply create(Call call) throws SQLException {
        Body body = call.body();
        User user;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            user = db.one(Queries.CREATE_USER, statement -> {
                statement.setString(1, body.text("nickname"));
                statement.setInt(2, body.integer("region_id"));
            }, Rows::user);
        } catch (SQLException e) {
            if (SqlErrors.is(e, SqlErrors.UNIQUE_VIOLATION)) {
                throw Errors.conflict("nickname already taken");
            }
            if (SqlErrors.is(e, SqlErrors.FOREIGN_KEY_VIOLATION)) {
                throw Errors.notFound("region not found");
            }
            throw e;
        }
        return Reply.created(JsonViews.user(user));
    }
}
