package bidbench.db;

import javax.sql.DataSource;

/**
 * Where requests borrow connections from (the {@code JAVA_POOL} knob): a {@link DataSource} that hands
 * out at most {@code DB_POOL_SIZE} connections at once, and what closes it at shutdown. A borrower
 * returns a connection with {@link java.sql.Connection#close()}.
 */
public interface ConnectionPool extends AutoCloseable {

    DataSource dataSource();

    /** Closes the pool and its connections; a no-op for connections already returned when unpooled. */
    @Override
    void close();
}
