package bidbench.json;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** The contract's one timestamp format: UTC, always three millisecond digits, always {@code Z}. */
public final class Timestamps {

    // 'uuuu' rather than 'yyyy': year-of-era would print differently before year 1.
    private static final DateTimeFormatter FORMAT =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private Timestamps() {}

    public static String format(Instant instant) {
        return FORMAT.format(instant);
    }
}
