package bidbench.db;

import java.sql.SQLTransientConnectionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The contract's 5 s pool checkout timeout, counted from the request's arrival rather than from the
 * moment it asks the pool. A request that waited for a Jetty thread has less of it left; one that
 * waited the whole 5 s gets 503 at once. The permits (DB_POOL_SIZE, handed out first come, first served)
 * keep the borrowers at most as many as the pool has connections, so the pool's own wait stays short
 * and this is where a request waits when the pool is exhausted.
 */
final class CheckoutBudget {

    private final Semaphore permits;
    private final long timeoutNanos;

    CheckoutBudget(int poolSize, long timeoutMillis) {
        this.permits = new Semaphore(poolSize, true);
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    }

    /** Takes a permit within what is left of the budget; returns true (the caller must {@link #release}). */
    boolean acquire(long arrivedNanos) throws SQLTransientConnectionException {
        long left = timeoutNanos - (System.nanoTime() - arrivedNanos);
        try {
            if (left > 0 && permits.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                return true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        throw new SQLTransientConnectionException(
                "no connection within the 5 s checkout timeout, counted from the request's arrival");
    }

    /** True when a request that arrived at {@code arrivedNanos} has at least {@code millis} of its budget left. */
    boolean hasLeft(long arrivedNanos, long millis) {
        return timeoutNanos - (System.nanoTime() - arrivedNanos) >= TimeUnit.MILLISECONDS.toNanos(millis);
    }

    void release() {
        permits.release();
    }

    int available() {
        return permits.availablePermits();
    }
}
