package bidbench.db;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import bidbench.config.Config;
import bidbench.config.JavaPool;
import bidbench.it.TestDatabase;
import bidbench.timing.RequestTiming;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.commons.dbcp2.BasicDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The three JAVA_POOL choices against the real test database: the same session settings, pooled or
 * not, at most DB_POOL_SIZE connections, and a checkout timeout that is 503 `database unavailable`.
 */
class ConnectionPoolsTest {

    /** Short enough to keep the suite quick; the app itself waits the contract's 5 s. */
    private static final long SHORT_TIMEOUT_MS = 300;

    private static Config config(JavaPool pool, int size, String databaseUrl) {
        Map<String, String> env = new HashMap<>(Map.of("DATABASE_URL", databaseUrl, "PORT", "0",
                "DB_POOL_SIZE", Integer.toString(size), "JAVA_POOL", pool.value()));
        return Config.fromEnv(env);
    }

    private static String text(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet row = statement.executeQuery(sql)) {
            row.next();
            return row.getString(1);
        }
    }

    @ParameterizedTest
    @EnumSource(JavaPool.class)
    void everyPoolConnectsWithTheSameSessionSettings(JavaPool kind) throws Exception {
        try (ConnectionPool pool = ConnectionPools.open(config(kind, 2, TestDatabase.url()))) {
            try (Connection connection = pool.dataSource().getConnection()) {
                assertEquals("bidbench-java", text(connection, "SELECT current_setting('application_name')"));
                assertTrue(connection.getAutoCommit(), "autocommit on");
                assertEquals("1", text(connection, "SELECT 1"));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(JavaPool.class)
    void onlyTheDriverOpensANewConnectionPerBorrow(JavaPool kind) throws Exception {
        try (ConnectionPool pool = ConnectionPools.open(config(kind, 1, TestDatabase.url()))) {
            DataSource source = pool.dataSource();
            String first;
            try (Connection connection = source.getConnection()) {
                first = text(connection, "SELECT pg_backend_pid()");
            }
            String second;
            try (Connection connection = source.getConnection()) {
                second = text(connection, "SELECT pg_backend_pid()");
            }
            if (kind == JavaPool.DRIVER) {
                assertNotEquals(first, second, "a new server process per connection");
            } else {
                assertEquals(first, second, "the pool's one connection, reused");
            }
        }
    }

    /** A reset drops and re-creates the database: a connect then fails with 3D000, which is still 503. */
    @ParameterizedTest
    @EnumSource(JavaPool.class)
    void aMissingDatabaseIsUnavailableWithEveryPool(JavaPool kind) throws Exception {
        var db = TestDatabase.target();
        String missing = "postgresql://" + db.user() + ":" + (db.password() == null ? "" : db.password())
                + "@" + db.host() + ":" + db.port() + "/bidbench_no_such_database";
        try (Database database = Database.start(config(kind, 1, missing))) {
            SQLException e = assertThrows(SQLException.class, () -> database.open(RequestTiming.start(false)));
            assertTrue(SqlErrors.isUnavailable(e), e.toString());
        }
    }

    @Test
    void driverOpensAtMostTheLimitAndTimesOutAs503() throws Exception {
        Config config = config(JavaPool.DRIVER, 2, TestDatabase.url());
        BoundedDataSource source = new BoundedDataSource(DriverPool.driverDataSource(config), 2, SHORT_TIMEOUT_MS);
        Connection a = source.getConnection();
        Connection b = source.getConnection();
        assertEquals(0, source.available());
        SQLException timeout = assertThrows(SQLException.class, source::getConnection);
        assertInstanceOf(SQLTransientConnectionException.class, timeout);
        assertTrue(SqlErrors.isUnavailable(timeout), timeout.toString());

        a.close();
        a.close(); // a second close must not hand out a second permit
        assertEquals(1, source.available());
        try (Connection c = source.getConnection()) {
            assertEquals("1", text(c, "SELECT 1"));
            assertEquals(0, source.available());
        }
        b.close();
        assertEquals(2, source.available());
        assertTrue(a.isClosed() && b.isClosed());
    }

    @Test
    void driverGivesThePermitBackWhenConnectingFails() throws Exception {
        String nowhere = TestDatabase.unreachableUrl();
        BoundedDataSource source = new BoundedDataSource(
                DriverPool.driverDataSource(config(JavaPool.DRIVER, 1, nowhere)), 1, SHORT_TIMEOUT_MS);
        for (int i = 0; i < 3; i++) {
            SQLException refused = assertThrows(SQLException.class, source::getConnection);
            assertTrue(SqlErrors.isUnavailable(refused), refused.toString());
            assertEquals(1, source.available());
        }
    }

    @Test
    void dbcp2CheckoutTimeoutIs503() throws Exception {
        BasicDataSource pool = Dbcp2Pool.configure(config(JavaPool.DBCP2, 1, TestDatabase.url()));
        pool.setMaxWait(Duration.ofMillis(SHORT_TIMEOUT_MS));
        try (pool) {
            pool.start();
            assertEquals(1, pool.getNumIdle(), "the fixed pool is opened at start");
            try (Connection held = pool.getConnection()) {
                SQLException timeout = assertThrows(SQLException.class, pool::getConnection);
                assertNull(timeout.getSQLState(), "dbcp2's timeout carries no SQLSTATE: " + timeout);
                assertTrue(SqlErrors.isUnavailable(timeout), timeout.toString());
                assertEquals("1", text(held, "SELECT 1"));
            }
        }
    }

    @Test
    void dbcp2WithoutADatabaseStartsAndFailsAs503() throws Exception {
        String nowhere = TestDatabase.unreachableUrl();
        try (ConnectionPool pool = ConnectionPools.open(config(JavaPool.DBCP2, 2, nowhere))) {
            SQLException refused = assertThrows(SQLException.class, () -> pool.dataSource().getConnection());
            assertTrue(SqlErrors.isUnavailable(refused), refused.toString());
        }
    }
}
