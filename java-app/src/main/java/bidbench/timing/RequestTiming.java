package bidbench.timing;

/**
 * Wall-clock accounting of one request for {@code Server-Timing} and debug logs: the time spent in
 * database calls (pool checkout included) and the time since handling began. A disabled instance
 * never reads the clock, so SERVER_TIMING=0 removes the measurement itself, not just the header.
 */
public final class RequestTiming {

    private static final RequestTiming OFF = new RequestTiming(false, 0);

    private final boolean on;
    private final long startNanos;
    private long dbNanos;

    private RequestTiming(boolean on, long startNanos) {
        this.on = on;
        this.startNanos = startNanos;
    }

    public static RequestTiming start(boolean on) {
        return on ? new RequestTiming(true, System.nanoTime()) : OFF;
    }

    public boolean isOn() {
        return on;
    }

    /** A start mark for {@link #addDb}; 0 when off. */
    public long mark() {
        return on ? System.nanoTime() : 0;
    }

    /** Adds the time since {@code mark} to the database total and returns it (0 when off). */
    public long addDb(long mark) {
        if (!on) {
            return 0;
        }
        long elapsed = System.nanoTime() - mark;
        dbNanos += elapsed;
        return elapsed;
    }

    public long dbNanos() {
        return dbNanos;
    }

    public long elapsedNanos() {
        return on ? System.nanoTime() - startNanos : 0;
    }

    /** {@code db;dur=1.234, app;dur=5.678}: milliseconds with exactly three decimals. */
    public String serverTimingHeader() {
        StringBuilder out = new StringBuilder(40).append("db;dur=");
        appendMillis(out, dbNanos);
        out.append(", app;dur=");
        appendMillis(out, elapsedNanos());
        return out.toString();
    }

    /** Milliseconds with three decimals, rounded to the microsecond; no String.format on the hot path. */
    public static StringBuilder appendMillis(StringBuilder out, long nanos) {
        long micros = (Math.max(nanos, 0) + 500) / 1000;
        long fraction = micros % 1000;
        out.append(micros / 1000).append('.');
        if (fraction < 100) {
            out.append('0');
        }
        if (fraction < 10) {
            out.append('0');
        }
        return out.append(fraction);
    }

    public static String millis(long nanos) {
        return appendMillis(new StringBuilder(12), nanos).toString();
    }
}
