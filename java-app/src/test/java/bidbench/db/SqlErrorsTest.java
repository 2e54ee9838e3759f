package bidbench.db;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ConnectException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * Which database failures are 503 `database unavailable` (contract rule 8) and which are bugs (500), for
 * the exception shapes of every JAVA_POOL choice. The same shapes come from real pools and a real server
 * in ConnectionPoolsTest; here each one is pinned down by itself.
 */
class SqlErrorsTest {

    @Test
    void connectionFailuresAndCheckoutTimeoutsAreUnavailable() {
        // pgjdbc: connection refused, and a connection lost mid-request.
        assertTrue(SqlErrors.isUnavailable(new PSQLException("Connection to 127.0.0.1:1 refused.",
                PSQLState.CONNECTION_UNABLE_TO_CONNECT, new ConnectException("Connection refused"))));
        assertTrue(SqlErrors.isUnavailable(new PSQLException("An I/O error occurred while sending to the backend.",
                PSQLState.CONNECTION_FAILURE)));
        // The server going away: admin shutdown, crash shutdown, starting up, too many connections.
        for (String state : new String[] {"57P01", "57P02", "57P03", "53300"}) {
            assertTrue(SqlErrors.isUnavailable(new SQLException("server", state)), state);
        }
        // HikariCP's and the unpooled driver's checkout timeout.
        assertTrue(SqlErrors.isUnavailable(new SQLTransientConnectionException(
                "bidbench - Connection is not available, request timed out after 5000ms.")));
        // commons-dbcp2's checkout timeout: commons-pool2's NoSuchElementException in a plain SQLException.
        assertTrue(SqlErrors.isUnavailable(new SQLException(
                "Cannot get a connection, pool error Timeout waiting for idle object, borrowMaxWaitDuration=PT5S",
                new NoSuchElementException("Timeout waiting for idle object, borrowMaxWaitDuration=PT5S"))));
        // commons-dbcp2 rethrowing a connect failure of a new pooled connection, wrapped once more.
        assertTrue(SqlErrors.isUnavailable(new SQLException("Cannot create PoolableConnectionFactory",
                new PSQLException("Connection refused", PSQLState.CONNECTION_UNABLE_TO_CONNECT))));
    }

    @Test
    void anyFailureToObtainAConnectionIsUnavailable() {
        // The database dropped and re-created under the app (a reset): the driver's connect error is 3D000.
        SQLException missing = new SQLException("FATAL: database \"bidbench\" does not exist", "3D000");
        assertFalse(SqlErrors.isUnavailable(missing), "after a connection was had, 3D000 would be a bug");
        SQLException checkout = SqlErrors.checkoutFailure(missing);
        assertTrue(SqlErrors.isUnavailable(checkout));
        assertEquals("3D000", checkout.getSQLState());
        assertSame(missing, checkout.getCause());
        SQLException timeout = new SQLTransientConnectionException("timed out");
        assertSame(timeout, SqlErrors.checkoutFailure(timeout), "already unavailable: passed through");
    }

    @Test
    void everythingElseIsABug() {
        assertFalse(SqlErrors.isUnavailable(new SQLException("duplicate key", SqlErrors.UNIQUE_VIOLATION)));
        assertFalse(SqlErrors.isUnavailable(new SQLException("syntax error", "42601")));
        assertFalse(SqlErrors.isUnavailable(new SQLException("no state")));
        assertFalse(SqlErrors.isUnavailable(new SQLException("wrapped", new IllegalStateException("bug"))));
        assertTrue(SqlErrors.is(new SQLException("fk", "23503"), SqlErrors.FOREIGN_KEY_VIOLATION));
    }
}
