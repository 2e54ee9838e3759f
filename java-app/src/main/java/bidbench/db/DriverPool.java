package bidbench.db;

import bidbench.config.Config;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * {@code JAVA_POOL=driver}: pgjdbc's own {@link PGSimpleDataSource}, no pool. Every request opens a new
 * physical connection and closes it at the end, which is what the thesis compared HikariCP against
 * (seed 003 §6.2). At most DB_POOL_SIZE connections are open at once (a {@link BoundedDataSource} with
 * the contract's 5 s checkout timeout), so the knob changes the library, not the connection limit.
 * Nothing connects at start, so the app starts without a database and needs no recovery afterwards.
 */
final class DriverPool implements ConnectionPool {

    private final BoundedDataSource dataSource;

    private DriverPool(BoundedDataSource dataSource) {
        this.dataSource = dataSource;
    }

    static DriverPool open(Config config) {
        return new DriverPool(new BoundedDataSource(
                driverDataSource(config), config.dbPoolSize(), ConnectionPools.CHECKOUT_TIMEOUT_MS));
    }

    static PGSimpleDataSource driverDataSource(Config config) {
        PGSimpleDataSource driver = new PGSimpleDataSource();
        // The URL carries host, port, database and DATABASE_URL's query string (pgjdbc parameters).
        driver.setURL(config.db().jdbcUrl());
        driver.setUser(config.db().user());
        driver.setPassword(config.db().password());
        try {
            for (var property : ConnectionPools.driverProperties().entrySet()) {
                driver.setProperty(property.getKey(), property.getValue());
            }
        } catch (SQLException e) {
            throw new IllegalStateException("pgjdbc rejected a connection property: " + e.getMessage(), e);
        }
        return driver;
    }

    @Override
    public DataSource dataSource() {
        return dataSource;
    }

    @Override
    public void close() {
        // Nothing pooled: every connection is closed by the request that opened it.
    }
}
