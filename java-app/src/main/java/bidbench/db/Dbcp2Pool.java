package bidbench.db;

import bidbench.config.Config;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.apache.commons.dbcp2.BasicDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code JAVA_POOL=dbcp2}: Apache commons-dbcp2's {@link BasicDataSource}, configured like the HikariCP
 * pool: DB_POOL_SIZE connections (initial = min idle = max idle = max total) opened at start, a 5 s
 * checkout timeout, autocommit on, the same pgjdbc properties. A dead connection is replaced: dbcp2
 * validates a connection on every borrow ({@code testOnBorrow}, its default; {@code Connection.isValid},
 * bounded to 5 s), drops one that failed with a disconnection SQLSTATE without re-validating it
 * ({@code fastFailValidation}), and its evictor refills the pool to its minimum every 30 s (HikariCP's
 * housekeeping period). So the app recovers without a restart when PostgreSQL comes back.
 */
final class Dbcp2Pool implements ConnectionPool {

    private static final Logger LOG = LoggerFactory.getLogger(Dbcp2Pool.class);

    private final BasicDataSource pool;

    private Dbcp2Pool(BasicDataSource pool) {
        this.pool = pool;
    }

    static Dbcp2Pool open(Config config) {
        BasicDataSource pool = configure(config);
        try {
            // Open the fixed pool now, as HikariCP does. Without a database dbcp2 stays unstarted and
            // tries again on the next borrow, so the app still starts and answers /health.
            pool.start();
        } catch (SQLException e) {
            LOG.warn("database unavailable at start, dbcp2 will retry on the next request: {}", e.getMessage());
        }
        return new Dbcp2Pool(pool);
    }

    static BasicDataSource configure(Config config) {
        BasicDataSource pool = new BasicDataSource();
        pool.setDriverClassName("org.postgresql.Driver");
        pool.setUrl(config.db().jdbcUrl());
        pool.setUsername(config.db().user());
        pool.setPassword(config.db().password());
        ConnectionPools.driverProperties().forEach(pool::addConnectionProperty);
        int size = config.dbPoolSize();
        pool.setInitialSize(size);
        pool.setMinIdle(size);
        pool.setMaxIdle(size);
        pool.setMaxTotal(size);
        pool.setMaxWait(Duration.ofMillis(ConnectionPools.CHECKOUT_TIMEOUT_MS));
        pool.setDefaultAutoCommit(true);
        pool.setTestOnBorrow(true);
        pool.setValidationQueryTimeout(Duration.ofSeconds(5));
        pool.setFastFailValidation(true);
        pool.setDurationBetweenEvictionRuns(Duration.ofSeconds(30));
        return pool;
    }

    @Override
    public DataSource dataSource() {
        return pool;
    }

    @Override
    public void close() {
        try {
            pool.close();
        } catch (SQLException e) {
            LOG.warn("closing the dbcp2 pool failed: {}", e.getMessage());
        }
    }
}
