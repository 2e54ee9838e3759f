package bidbench.timing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RequestTimingTest {

    @Test
    void millisecondsWithThreeDecimals() {
        assertEquals("0.000", RequestTiming.millis(0));
        assertEquals("0.000", RequestTiming.millis(499));
        assertEquals("0.001", RequestTiming.millis(500));
        assertEquals("0.010", RequestTiming.millis(10_000));
        assertEquals("1.234", RequestTiming.millis(1_234_000));
        assertEquals("12.346", RequestTiming.millis(12_345_600));
        assertEquals("1000.000", RequestTiming.millis(1_000_000_000));
        assertEquals("0.000", RequestTiming.millis(-5));
    }

    @Test
    void headerFormat() throws InterruptedException {
        RequestTiming timing = RequestTiming.start(true);
        long mark = timing.mark();
        Thread.sleep(2);
        timing.addDb(mark);
        String header = timing.serverTimingHeader();
        assertTrue(header.matches("db;dur=[0-9]+\\.[0-9]{3}, app;dur=[0-9]+\\.[0-9]{3}"), header);
        assertTrue(timing.dbNanos() >= 2_000_000);
    }

    @Test
    void offNeverMeasures() {
        RequestTiming off = RequestTiming.start(false);
        assertSame(off, RequestTiming.start(false));
        assertEquals(0, off.mark());
        assertEquals(0, off.addDb(123));
        assertEquals(0, off.dbNanos());
        assertEquals(0, off.elapsedNanos());
    }
}
