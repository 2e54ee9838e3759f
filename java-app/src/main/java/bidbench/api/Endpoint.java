package bidbench.api;

import bidbench.http.Reply;
import bidbench.validation.Schema;
import java.sql.SQLException;

/** One route + method: what input it takes, and the action that does its database work. */
public record Endpoint(Schema schema, boolean paged, Action action) {

    @FunctionalInterface
    public interface Action {
        Reply run(Call call) throws SQLException;
    }

    public static Endpoint plain(Action action) {
        return new Endpoint(null, false, action);
    }

    public static Endpoint paged(Action action) {
        return new Endpoint(null, true, action);
    }

    public static Endpoint withBody(Schema schema, Action action) {
        return new Endpoint(schema, false, action);
    }
}
