package bidbench.db;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * A {@link DataSource} that lets at most {@code permits} connections of an unpooled data source be open
 * at once, like a pool's maximum size. A borrower waits for a permit up to the checkout timeout, then
 * gets an {@link SQLTransientConnectionException} (503 database unavailable), as from HikariCP. The
 * permit goes back when the connection is closed (at most once, however often close is called).
 */
final class BoundedDataSource extends DelegatingDataSource {

    private final Semaphore permits;
    private final long timeoutMillis;

    BoundedDataSource(DataSource delegate, int maxOpen, long timeoutMillis) {
        super(delegate);
        // Fair: borrowers are served in arrival order, so none starves behind later ones.
        this.permits = new Semaphore(maxOpen, true);
        this.timeoutMillis = timeoutMillis;
    }

    @Override
    public Connection getConnection() throws SQLException {
        acquire();
        try {
            return releasingOnClose(delegate.getConnection());
        } catch (SQLException | RuntimeException | Error e) {
            permits.release();
            throw e;
        }
    }

    /** Free permits: connections that could be opened right now without waiting. */
    int available() {
        return permits.availablePermits();
    }

    private void acquire() throws SQLException {
        boolean acquired;
        try {
            acquired = permits.tryAcquire(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLTransientConnectionException("interrupted while waiting for a connection", "08001", e);
        }
        if (!acquired) {
            throw new SQLTransientConnectionException(
                    "connection is not available, request timed out after " + timeoutMillis + "ms", "08001");
        }
    }

    private Connection releasingOnClose(Connection connection) {
        return (Connection) Proxy.newProxyInstance(
                Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, new Guard(connection));
    }

    /** Forwards every call; {@code close} and {@code abort} also give the permit back, once. */
    private final class Guard implements InvocationHandler {

        private final Connection connection;
        private final AtomicBoolean released = new AtomicBoolean();

        Guard(Connection connection) {
            this.connection = connection;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            String name = method.getName();
            boolean closing = name.equals("close") || name.equals("abort");
            try {
                return method.invoke(connection, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            } finally {
                if (closing && released.compareAndSet(false, true)) {
                    permits.release();
                }
            }
        }
    }
}
