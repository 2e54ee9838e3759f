package bidbench.db;

import bidbench.config.Config;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/**
 * {@code JAVA_POOL=hikari} (the default): HikariCP, a fixed pool of DB_POOL_SIZE connections opened at start.
 * Its connectionTimeout is one checkout attempt; {@link Database#open} repeats attempts within the 5 s budget.
 */
final class HikariPool implements ConnectionPool {

    private final HikariDataSource pool;

    private HikariPool(HikariDataSource pool) {
        this.pool = pool;
    }

    static HikariPool open(Config config) {
        HikariConfig hikari = new HikariConfig();
        hikari.setPoolName("bidbench");
        hikari.setDriverClassName("org.postgresql.Driver");
        hikari.setJdbcUrl(config.db().jdbcUrl());
        hikari.setUsername(config.db().user());
        hikari.setPassword(config.db().password());
        // A fixed pool (docs/design.md §3.3: knobs explicit): DB_POOL_SIZE connections, opened at start.
        hikari.setMaximumPoolSize(config.dbPoolSize());
        hikari.setMinimumIdle(config.dbPoolSize());
        hikari.setConnectionTimeout(ConnectionPools.ATTEMPT_TIMEOUT_MS);
        // Start even when the database is down: /health answers, /ready says 503, and the pool keeps
        // trying in the background, so the app recovers without a restart.
        hikari.setInitializationFailTimeout(-1);
        hikari.setAutoCommit(true);
        ConnectionPools.driverProperties().forEach(hikari::addDataSourceProperty);
        return new HikariPool(new HikariDataSource(hikari));
    }

    @Override
    public DataSource dataSource() {
        return pool;
    }

    @Override
    public void close() {
        pool.close();
    }
}
