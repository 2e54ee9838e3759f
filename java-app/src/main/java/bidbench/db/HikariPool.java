package bidbench.db;

import bidbench.config.Config;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import javax.sql.DataSource;

/**
 * {@code JAVA_POOL=hikari} (the default): HikariCP, a fixed pool of DB_POOL_SIZE connections opened at start.
 * Its connectionTimeout is one checkout attempt; {@link Database#open} repeats attempts within the 5 s budget.
 * It connects through {@link ReconnectingDataSource}, which notices the database's return within 100 ms.
 */
final class HikariPool implements ConnectionPool {

    private final HikariDataSource pool;
    private final ReconnectingDataSource connector;

    private HikariPool(HikariDataSource pool, ReconnectingDataSource connector) {
        this.pool = pool;
        this.connector = connector;
    }

    static HikariPool open(Config config) {
        HikariConfig hikari = new HikariConfig();
        hikari.setPoolName("bidbench");
        // pgjdbc's data source with the same URL, credentials and properties as the unpooled driver,
        // behind the wrapper that keeps HikariCP's reconnect back-off short (see ReconnectingDataSource).
        ReconnectingDataSource connector = new ReconnectingDataSource(DriverPool.driverDataSource(config));
        hikari.setDataSource(connector);
        // A fixed pool (docs/design.md §3.3: knobs explicit): DB_POOL_SIZE connections, opened at start.
        hikari.setMaximumPoolSize(config.dbPoolSize());
        hikari.setMinimumIdle(config.dbPoolSize());
        hikari.setConnectionTimeout(ConnectionPools.ATTEMPT_TIMEOUT_MS);
        // Start even when the database is down: /health answers, /ready says 503, and the pool keeps
        // trying in the background, so the app recovers without a restart.
        hikari.setInitializationFailTimeout(-1);
        hikari.setAutoCommit(true);
        return new HikariPool(new HikariDataSource(hikari), connector);
    }

    /**
     * Only HikariCP's background thread makes connections, so with none idle a checkout can only wait for
     * it; while the database is down that wait is a whole attempt (500 ms) for a certain 503.
     */
    @Override
    public boolean canLend() {
        HikariPoolMXBean state = pool.getHikariPoolMXBean();
        return state == null || state.getIdleConnections() > 0;
    }

    @Override
    public DataSource dataSource() {
        return pool;
    }

    @Override
    public void close() {
        connector.close();
        pool.close();
    }
}
