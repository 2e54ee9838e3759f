package bidbench.db;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The 5 s checkout budget counted from a request's arrival (the contract's rule 8 for a queued request). */
class CheckoutBudgetTest {

    private static long arrivedAgo(long millis) {
        return System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(millis);
    }

    @Test
    void aFreshRequestGetsAPermitAndGivesItBack() throws Exception {
        CheckoutBudget budget = new CheckoutBudget(2, 5_000);
        assertTrue(budget.acquire(System.nanoTime()));
        assertEquals(1, budget.available());
        budget.release();
        assertEquals(2, budget.available());
    }

    @Test
    void aRequestThatQueuedPastTheTimeoutIs503EvenWithAFreeConnection() {
        CheckoutBudget budget = new CheckoutBudget(2, 5_000);
        SQLException late = assertThrows(SQLException.class, () -> budget.acquire(arrivedAgo(6_000)));
        assertTrue(SqlErrors.isUnavailable(late), late.toString());
        assertTrue(!SqlErrors.isConnectionLost(late), "a busy pool must not shut the availability gate");
        assertEquals(2, budget.available(), "nothing taken");
    }

    @Test
    void withThePoolTakenARequestWaitsOnlyWhatIsLeftOfItsBudget() throws Exception {
        CheckoutBudget budget = new CheckoutBudget(1, 5_000);
        assertTrue(budget.acquire(System.nanoTime()));
        // Arrived 4.95 s ago: 50 ms left, and the only connection stays taken, so 503.
        SQLException timeout = assertThrows(SQLException.class, () -> budget.acquire(arrivedAgo(4_950)));
        assertTrue(SqlErrors.isUnavailable(timeout), timeout.toString());
        budget.release();
        assertTrue(budget.acquire(System.nanoTime()), "the released permit is there for the next request");
    }
}
