package bidbench.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;

/** Writes compact JSON to a byte array; every response body and the start-up line go through here. */
public final class JsonOutput {

    /** Writes one JSON value with the generator it is given. */
    @FunctionalInterface
    public interface Writer {
        void write(JsonGenerator json) throws IOException;
    }

    // Emit characters outside the BMP as four UTF-8 bytes, like the other apps, rather than as a pair of
    // backslash-u escapes (Jackson's default); both decode to the same string.
    private static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
            .build();

    private JsonOutput() {}

    public static byte[] bytes(Writer writer) {
        try (ByteArrayBuilder out = new ByteArrayBuilder(512)) {
            try (JsonGenerator json = FACTORY.createGenerator(out)) {
                writer.write(json);
            }
            return out.toByteArray();
        } catch (IOException e) {
            // Writing to memory cannot fail; an IOException here is a bug in a Writer.
            throw new UncheckedIOException(e);
        }
    }
}
