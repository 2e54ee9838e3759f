package bidbench.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigTest {

    @Test
    void defaults() {
        Config config = Config.fromEnv(Map.of("DATABASE_URL", "postgresql://u:p@db:5433/bids"));
        assertEquals("127.0.0.1", config.host());
        assertEquals(8080, config.port());
        assertEquals(10, config.dbPoolSize());
        assertEquals(32, config.javaThreads());
        assertEquals(JavaPool.HIKARI, config.javaPool());
        assertEquals("info", config.logLevel());
        assertTrue(config.serverTiming());
        assertFalse(config.unfairUnsorted());
        assertFalse(config.unfairPerField());
    }

    @Test
    void everyKnob() {
        Config config = Config.fromEnv(Map.of(
                "HOST", "0.0.0.0", "PORT", "9090", "DATABASE_URL", "postgresql://u@db/bids",
                "DB_POOL_SIZE", "60", "JAVA_THREADS", "200", "LOG_LEVEL", "DEBUG", "SERVER_TIMING", "0",
                "BIDBENCH_UNFAIR_UNSORTED", "1", "BIDBENCH_UNFAIR_PER_FIELD", "1", "JAVA_POOL", "dbcp2"));
        assertEquals("0.0.0.0", config.host());
        assertEquals(9090, config.port());
        assertEquals(60, config.dbPoolSize());
        assertEquals(200, config.javaThreads());
        assertEquals(JavaPool.DBCP2, config.javaPool());
        assertEquals("debug", config.logLevel());
        assertFalse(config.serverTiming());
        assertTrue(config.unfairUnsorted());
        assertTrue(config.unfairPerField());
    }

    @Test
    void unfairKnobsAreIndependent() {
        String url = "postgresql://u:p@db/bids";
        Config perField = Config.fromEnv(Map.of("DATABASE_URL", url, "BIDBENCH_UNFAIR_PER_FIELD", "1"));
        assertTrue(perField.unfairPerField());
        assertFalse(perField.unfairUnsorted());
        assertTrue(perField.withPort(0).unfairPerField());
        Config off = Config.fromEnv(Map.of("DATABASE_URL", url, "BIDBENCH_UNFAIR_PER_FIELD", "0"));
        assertFalse(off.unfairPerField());
        Config unsorted = Config.fromEnv(Map.of("DATABASE_URL", url, "BIDBENCH_UNFAIR_UNSORTED", "1"));
        assertFalse(unsorted.unfairPerField());
    }

    @Test
    void rejectsNonsense() {
        String url = "postgresql://u:p@db/bids";
        assertThrows(IllegalArgumentException.class, () -> Config.fromEnv(Map.of("DATABASE_URL", url, "PORT", "x")));
        assertThrows(IllegalArgumentException.class, () -> Config.fromEnv(Map.of("DATABASE_URL", url, "PORT", "70000")));
        assertThrows(IllegalArgumentException.class, () -> Config.fromEnv(Map.of("DATABASE_URL", url, "DB_POOL_SIZE", "0")));
        assertThrows(IllegalArgumentException.class, () -> Config.fromEnv(Map.of("DATABASE_URL", url, "JAVA_THREADS", "-2")));
        assertThrows(IllegalArgumentException.class, () -> Config.fromEnv(Map.of("DATABASE_URL", url, "LOG_LEVEL", "trace")));
        assertThrows(IllegalArgumentException.class, () -> Config.fromEnv(Map.of("DATABASE_URL", url, "SERVER_TIMING", "yes")));
        assertEquals("BIDBENCH_UNFAIR_UNSORTED must be 0 or 1, got 'true'", assertThrows(IllegalArgumentException.class,
                () -> Config.fromEnv(Map.of("DATABASE_URL", url, "BIDBENCH_UNFAIR_UNSORTED", "true"))).getMessage());
        assertEquals("BIDBENCH_UNFAIR_PER_FIELD must be 0 or 1, got 'yes'", assertThrows(IllegalArgumentException.class,
                () -> Config.fromEnv(Map.of("DATABASE_URL", url, "BIDBENCH_UNFAIR_PER_FIELD", "yes"))).getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> Config.fromEnv(Map.of("DATABASE_URL", url, "BIDBENCH_UNFAIR_PER_FIELD", "2")));
        assertThrows(IllegalArgumentException.class, () -> Config.fromEnv(Map.of("DATABASE_URL", "mysql://u@h/d")));
    }

    @Test
    void javaPoolKnob() {
        String url = "postgresql://u:p@db/bids";
        assertEquals(JavaPool.HIKARI, Config.fromEnv(Map.of("DATABASE_URL", url, "JAVA_POOL", "hikari")).javaPool());
        assertEquals(JavaPool.DRIVER, Config.fromEnv(Map.of("DATABASE_URL", url, "JAVA_POOL", "driver")).javaPool());
        assertEquals(JavaPool.DBCP2, Config.fromEnv(Map.of("DATABASE_URL", url, "JAVA_POOL", " DBCP2 ")).javaPool());
        assertEquals(JavaPool.HIKARI, Config.fromEnv(Map.of("DATABASE_URL", url, "JAVA_POOL", "")).javaPool());
        for (JavaPool pool : JavaPool.values()) {
            assertEquals(pool, JavaPool.parse(pool.value()));
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Config.fromEnv(Map.of("DATABASE_URL", url, "JAVA_POOL", "c3p0")));
        assertEquals("JAVA_POOL must be hikari, driver or dbcp2, got 'c3p0'", e.getMessage());
        assertEquals(JavaPool.DRIVER, Config.fromEnv(Map.of("DATABASE_URL", url, "JAVA_POOL", "driver"))
                .withPort(0).javaPool());
    }

    @Test
    void databaseUrl() {
        DbTarget db = DbTarget.parseUrl("postgresql://bid%40bench:p%3Ass+w@127.0.0.1:55432/bidbench?sslmode=disable");
        assertEquals("bid@bench", db.user());
        assertEquals("p:ss+w", db.password());
        assertEquals("jdbc:postgresql://127.0.0.1:55432/bidbench?sslmode=disable", db.jdbcUrl());
        assertEquals("postgresql://bid@bench:***@127.0.0.1:55432/bidbench", db.masked());
        assertFalse(db.toString().contains("p:ss"));
    }

    @Test
    void databaseUrlDefaults() {
        DbTarget db = DbTarget.parseUrl("postgres://alice@localhost");
        assertEquals(5432, db.port());
        assertEquals("alice", db.database());
        assertNull(db.password());
        assertEquals("postgresql://alice@localhost:5432/alice", db.masked());
        assertEquals("jdbc:postgresql://[::1]:5432/x", DbTarget.parseUrl("postgresql://u:p@[::1]/x").jdbcUrl());
    }

    @Test
    void libpqVariablesWhenNoUrl() {
        DbTarget db = DbTarget.fromEnv(Map.of("PGHOST", "db.local", "PGPORT", "6543", "PGUSER", "bob",
                "PGPASSWORD", "secret", "PGDATABASE", "auction"));
        assertEquals("jdbc:postgresql://db.local:6543/auction", db.jdbcUrl());
        assertEquals("bob", db.user());
        assertEquals("secret", db.password());
        assertEquals("postgresql://bob:***@db.local:6543/auction", db.masked());
        assertEquals("postgresql://bob@localhost:5432/bob", DbTarget.fromEnv(Map.of("PGUSER", "bob")).masked());
    }
}
