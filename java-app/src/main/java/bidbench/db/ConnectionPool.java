package bidbench.db;

import javax.sql.DataSource;

/**
 * Where requests borrow connections from (the {@code JAVA_POOL} knob): a {@link DataSource} that hands
 * out at most {@code DB_POOL_SIZE} connections at once, and what closes it at shutdown. A borrower
 * returns a connection with {@link java.sql.Connection#close()}.
 */
public interface ConnectionPool extends AutoCloseable {

    DataSource dataSource();

    /**
     * Whether a checkout may succeed right now. False only when the pool can tell that it has nothing to
     * lend and that a borrower could do nothing but wait; pools that connect on the borrower's thread
     * (a refused connect fails at once) always say true.
     */
    default boolean canLend() {
        return true;
    }

    /** Closes the pool and its connections; a no-op for connections already returned when unpooled. */
    @Override
    void close();
}
