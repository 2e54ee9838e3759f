package bidbench.it;

import static org.junit.jupiter.api.Assertions.fail;

import bidbench.config.DbTarget;
import java.io.IOException;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;

/**
 * The real database the integration tests run against: DATABASE_URL, as `./bidbench test` sets it
 * (a freshly reset database seeded with scale 1, seed 42). Without it the tests fail, never skip.
 * Public for the pool tests of bidbench.db.
 */
public final class TestDatabase {

    private TestDatabase() {}

    public static String url() {
        String url = System.getenv("DATABASE_URL");
        if (url == null || url.isBlank()) {
            fail("DATABASE_URL is not set: the integration tests need the seeded database. "
                    + "Run them with `./bidbench test --only java`, or with DATABASE_URL=$(./bidbench db url) "
                    + "after `./bidbench db reset`.");
        }
        return url;
    }

    public static DbTarget target() {
        return DbTarget.fromEnv(Map.of("DATABASE_URL", url()));
    }

    /** A DATABASE_URL like the real one but on a local port nothing listens on: the database is "down". */
    public static String unreachableUrl() throws IOException {
        int closedPort;
        try (ServerSocket probe = new ServerSocket(0)) {
            closedPort = probe.getLocalPort();
        }
        return urlAt(closedPort);
    }

    /** A DATABASE_URL like the real one but on {@code port} of 127.0.0.1, whatever listens there. */
    public static String urlAt(int port) {
        DbTarget db = target();
        return "postgresql://" + db.user() + "@127.0.0.1:" + port + "/" + db.database();
    }

    static Connection connect() throws SQLException {
        DbTarget db = target();
        return DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
    }

    /** The first column of the first row as a long, or null when there is no row. */
    static Long scalar(String sql, Object... parameters) throws SQLException {
        String value = text(sql, parameters);
        return value == null ? null : Long.valueOf(value);
    }

    /** The first column of the first row as text, or null when there is no row. */
    static String text(String sql, Object... parameters) throws SQLException {
        try (Connection connection = connect(); PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                statement.setObject(i + 1, parameters[i]);
            }
            try (ResultSet row = statement.executeQuery()) {
                return row.next() ? row.getString(1) : null;
            }
        }
    }
}
