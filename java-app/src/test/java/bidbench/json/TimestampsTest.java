package bidbench.json;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class TimestampsTest {

    @Test
    void alwaysThreeMillisecondDigitsAndZ() {
        assertEquals("2026-11-21T14:21:00.000Z", Timestamps.format(Instant.parse("2026-11-21T14:21:00Z")));
        assertEquals("2026-11-21T14:21:00.100Z", Timestamps.format(Instant.parse("2026-11-21T14:21:00.1Z")));
        assertEquals("2026-11-21T14:21:00.123Z", Timestamps.format(Instant.parse("2026-11-21T14:21:00.123Z")));
    }

    @Test
    void convertsOffsetsToUtc() {
        Instant fromPlusTwo = OffsetDateTime.of(2026, 1, 1, 1, 30, 0, 5_000_000, ZoneOffset.ofHours(2)).toInstant();
        assertEquals("2025-12-31T23:30:00.005Z", Timestamps.format(fromPlusTwo));
    }

    @Test
    void truncatesBelowMilliseconds() {
        // The database stores timestamptz(3), so this never happens on the wire; still, never round up.
        assertEquals("2036-01-01T00:00:00.999Z", Timestamps.format(Instant.parse("2036-01-01T00:00:00.999999Z")));
    }

    @Test
    void independentOfTheJvmTimeZone() {
        java.util.TimeZone saved = java.util.TimeZone.getDefault();
        try {
            java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone("Pacific/Kiritimati"));
            assertEquals("2026-06-30T23:59:59.999Z", Timestamps.format(Instant.parse("2026-06-30T23:59:59.999Z")));
        } finally {
            java.util.TimeZone.setDefault(saved);
        }
    }
}
