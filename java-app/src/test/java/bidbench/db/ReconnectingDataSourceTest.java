package bidbench.db;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/** HikariCP's connector: the first refusal is reported, later ones are retried until the database is back. */
class ReconnectingDataSourceTest {

    private static final Connection CONNECTION = (Connection) Proxy.newProxyInstance(
            Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> null);

    /** Fails with {@code failure} for the first {@code failures} connects, then connects. */
    private static DataSource failing(int failures, SQLException failure, AtomicInteger attempts) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    if (!method.getName().equals("getConnection")) {
                        return null;
                    }
                    if (attempts.incrementAndGet() <= failures) {
                        throw failure;
                    }
                    return CONNECTION;
                });
    }

    private static SQLException refused() {
        return new PSQLException("Connection to 127.0.0.1:1 refused", PSQLState.CONNECTION_UNABLE_TO_CONNECT);
    }

    @Test
    void theFirstRefusalReachesThePoolAndLaterOnesAreRetried() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        ReconnectingDataSource source = new ReconnectingDataSource(failing(4, refused(), attempts));
        SQLException first = assertThrows(SQLException.class, source::getConnection);
        assertEquals(PSQLState.CONNECTION_UNABLE_TO_CONNECT.getState(), first.getSQLState());
        assertSame(CONNECTION, source.getConnection(), "retried until the database took the connection");
        assertEquals(5, attempts.get());
    }

    @Test
    void aRejectionThatIsNoOutageIsNotRetried() {
        AtomicInteger attempts = new AtomicInteger();
        SQLException password = new PSQLException("password authentication failed", PSQLState.INVALID_PASSWORD);
        ReconnectingDataSource source = new ReconnectingDataSource(failing(10, password, attempts));
        assertThrows(SQLException.class, source::getConnection);
        assertThrows(SQLException.class, source::getConnection);
        assertEquals(2, attempts.get());
    }

    @Test
    void closingEndsTheRetries() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        ReconnectingDataSource source = new ReconnectingDataSource(failing(Integer.MAX_VALUE, refused(), attempts));
        assertThrows(SQLException.class, source::getConnection);
        source.close();
        assertThrows(SQLException.class, source::getConnection, "a closed pool's connector gives up at once");
        assertEquals(2, attempts.get());
    }
}
