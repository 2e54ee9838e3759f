package bidbench.it;

import bidbench.App;
import bidbench.config.Config;
import java.util.HashMap;
import java.util.Map;

/** One app per test JVM, on a free port, against DATABASE_URL. */
final class TestApp {

    private static App app;

    private TestApp() {}

    static synchronized int port() throws Exception {
        if (app == null) {
            app = start(TestDatabase.url(), Map.of());
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    app.close();
                } catch (Exception e) {
                    // the JVM is exiting anyway
                }
            }));
        }
        return app.port();
    }

    static App start(String databaseUrl, Map<String, String> extra) throws Exception {
        Map<String, String> env = new HashMap<>(Map.of(
                "DATABASE_URL", databaseUrl, "PORT", "0", "DB_POOL_SIZE", "4", "JAVA_THREADS", "16"));
        env.putAll(extra);
        return App.start(Config.fromEnv(env));
    }
}
