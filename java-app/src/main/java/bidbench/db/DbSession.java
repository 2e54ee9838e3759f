package bidbench.db;

import bidbench.timing.RequestTiming;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection (pooled, or with JAVA_POOL=driver a new one) for the length of one request. Every
 * statement runs as a prepared statement
 * (pgjdbc caches them per connection), is timed into the request's {@link RequestTiming}, and at
 * LOG_LEVEL=debug is logged with its name and duration.
 */
public final class DbSession implements AutoCloseable {

    /** Sets a statement's parameters. */
    @FunctionalInterface
    public interface Binder {
        void bind(PreparedStatement statement) throws SQLException;
    }

    /** Maps the current row. */
    @FunctionalInterface
    public interface RowMapper<T> {
        T map(ResultSet row) throws SQLException;
    }

    public static final Binder NO_PARAMETERS = statement -> { };

    private static final Logger LOG = LoggerFactory.getLogger("bidbench.sql");

    /** Told of every failed statement, so a lost connection shuts the {@link AvailabilityGate}. */
    @FunctionalInterface
    interface FailureObserver {
        void observe(SQLException failure);
    }

    private final Connection connection;
    private final RequestTiming timing;
    private final FailureObserver failures;
    private final Runnable onClose;
    private boolean inTransaction;

    DbSession(Connection connection, RequestTiming timing, FailureObserver failures, Runnable onClose) {
        this.connection = connection;
        this.timing = timing;
        this.failures = failures;
        this.onClose = onClose;
    }

    public <T> List<T> list(Sql sql, Binder binder, RowMapper<T> mapper) throws SQLException {
        long mark = timing.mark();
        try (PreparedStatement statement = connection.prepareStatement(sql.text())) {
            binder.bind(statement);
            try (ResultSet rows = statement.executeQuery()) {
                List<T> result = new ArrayList<>();
                while (rows.next()) {
                    result.add(mapper.map(rows));
                }
                return result;
            }
        } catch (SQLException e) {
            throw observed(e);
        } finally {
            done(sql.name(), mark);
        }
    }

    /** The first row, or null when there is none. */
    public <T> T one(Sql sql, Binder binder, RowMapper<T> mapper) throws SQLException {
        long mark = timing.mark();
        try (PreparedStatement statement = connection.prepareStatement(sql.text())) {
            binder.bind(statement);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? mapper.map(rows) : null;
            }
        } catch (SQLException e) {
            throw observed(e);
        } finally {
            done(sql.name(), mark);
        }
    }

    /** True when the statement returned a row; for the existence checks. */
    public boolean exists(Sql sql, Binder binder) throws SQLException {
        return one(sql, binder, row -> Boolean.TRUE) != null;
    }

    public int update(Sql sql, Binder binder) throws SQLException {
        long mark = timing.mark();
        try (PreparedStatement statement = connection.prepareStatement(sql.text())) {
            binder.bind(statement);
            return statement.executeUpdate();
        } catch (SQLException e) {
            throw observed(e);
        } finally {
            done(sql.name(), mark);
        }
    }

    /** Starts a READ COMMITTED transaction (the server default); pgjdbc sends BEGIN with the next statement. */
    public void begin() throws SQLException {
        connection.setAutoCommit(false);
        inTransaction = true;
    }

    public void commit() throws SQLException {
        long mark = timing.mark();
        try {
            connection.commit();
            inTransaction = false;
        } catch (SQLException e) {
            throw observed(e);
        } finally {
            done("COMMIT", mark);
        }
    }

    public void rollback() throws SQLException {
        long mark = timing.mark();
        try {
            connection.rollback();
            inTransaction = false;
        } finally {
            done("ROLLBACK", mark);
        }
    }

    /** Returns the connection to the pool (closes it, unpooled), rolling back a transaction an exception left open. */
    @Override
    public void close() throws SQLException {
        long mark = timing.mark();
        try (connection) {
            if (inTransaction) {
                rollbackQuietly();
            }
        } finally {
            onClose.run();
            timing.addDb(mark);
        }
    }

    private void rollbackQuietly() {
        try {
            rollback();
        } catch (SQLException e) {
            // The connection is probably gone; the pool evicts it (or it is closed), and the original
            // failure is reported.
            LOG.debug("rollback after failure failed: {}", e.getMessage());
        }
    }

    private SQLException observed(SQLException failure) {
        failures.observe(failure);
        return failure;
    }

    private void done(String name, long mark) {
        long nanos = timing.addDb(mark);
        if (LOG.isDebugEnabled()) {
            LOG.debug("sql {} {}ms", name, RequestTiming.millis(nanos));
        }
    }
}
