package bidbench;

import bidbench.config.Config;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Entry point: configuration from the environment, start, one start-up line, stop on SIGTERM. */
public final class Main {

    private Main() {}

    public static void main(String[] args) throws Exception {
        Config config;
        try {
            config = Config.fromEnv(System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println("bidbench-java: invalid configuration: " + e.getMessage());
            System.exit(2);
            return;
        }
        Logging.configure(config.logLevel());
        // Not a static field: the logger must be created after Logging.configure.
        Logger log = LoggerFactory.getLogger(Main.class);
        if (config.unfairUnsorted()) {
            log.warn("!!! BIDBENCH_UNFAIR_UNSORTED=1: list queries run WITHOUT ORDER BY. This is the deliberately"
                    + " unequal variant for negative controls; its results are not comparable. !!!");
        }
        if (config.unfairPerField()) {
            log.warn("!!! BIDBENCH_UNFAIR_PER_FIELD=1: GET /items/{id} reads each field with its own SELECT. This is the"
                    + " deliberately unequal variant for negative controls; its results are not comparable. !!!");
        }

        App app;
        try {
            app = App.start(config);
        } catch (Exception e) {
            log.error("could not start on {}:{}", config.host(), config.port(), e);
            Logging.stop();
            System.exit(1);
            return;
        }

        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(app, log), "bidbench-shutdown"));
        System.out.println(StartupLine.render(config, app));
        System.out.flush();
        app.join();
    }

    /**
     * SIGTERM (or SIGINT): stop accepting, drain in-flight requests for up to 10 s, close the pool,
     * exit 0. The JVM would report 143 for a signal-initiated shutdown; a clean stop is a success,
     * so the hook ends the process itself with halt(0) once everything is closed.
     */
    private static void stop(App app, Logger log) {
        int status = 0;
        try {
            app.close();
        } catch (Exception e) {
            log.warn("stop did not complete cleanly: {}", e.toString());
            status = 1;
        }
        Logging.stop();
        System.out.flush();
        Runtime.getRuntime().halt(status);
    }
}
