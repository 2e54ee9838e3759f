package bidbench.json;

import bidbench.http.Errors;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Parses a request body under the contract's rules (step 7.1 to 7.3): strict UTF-8, strict RFC 8259
 * JSON with at most 32 nested containers and no unpaired surrogate escapes, and a top-level object.
 *
 * <p>The result maps each top-level key to a {@link String}, a {@link JsonNumber}, or the
 * {@link JsonToken} that opened any other value (null, true, false, object, array). Duplicate keys:
 * the last one wins.
 */
public final class StrictJson {

    public static final int MAX_NESTING_DEPTH = 32;

    private static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(MAX_NESTING_DEPTH)
                    // The 64 KiB body limit already bounds these; Jackson's own defaults would
                    // reject some valid documents (for example a 60 000-digit number) as invalid JSON.
                    .maxNumberLength(Integer.MAX_VALUE)
                    .maxNameLength(Integer.MAX_VALUE)
                    .maxStringLength(Integer.MAX_VALUE)
                    .build())
            .build();

    private StrictJson() {}

    public static Map<String, Object> parseObject(byte[] body) {
        String text = decodeUtf8(body);
        // Jackson skips a BOM when it reads bytes; the contract calls a BOM invalid JSON, so we parse
        // the decoded text and reject it here.
        if (!text.isEmpty() && text.charAt(0) == '\uFEFF') {
            throw Errors.invalidJson();
        }
        Map<String, Object> object = null;
        try (JsonParser parser = FACTORY.createParser(text)) {
            JsonToken root = parser.nextToken();
            if (root == null) {
                throw Errors.invalidJson();
            }
            if (root == JsonToken.START_OBJECT) {
                object = readObject(parser);
            } else {
                readValue(parser, root);
            }
            // Jackson would read a second root value; RFC 8259 allows only whitespace after the first.
            if (parser.nextToken() != null) {
                throw Errors.invalidJson();
            }
        } catch (IOException e) {
            throw Errors.invalidJson();
        }
        if (object == null) {
            throw Errors.notAnObject();
        }
        return object;
    }

    static String decodeUtf8(byte[] body) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body))
                    .toString();
        } catch (CharacterCodingException e) {
            throw Errors.invalidUtf8();
        }
    }

    private static Map<String, Object> readObject(JsonParser parser) throws IOException {
        Map<String, Object> object = new LinkedHashMap<>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String name = checked(parser.currentName());
            object.put(name, readValue(parser, parser.nextToken()));
        }
        return object;
    }

    /** Reads one value whose first token is current; nested containers are walked, not kept. */
    private static Object readValue(JsonParser parser, JsonToken token) throws IOException {
        switch (token) {
            case VALUE_STRING:
                return checked(parser.getText());
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                return new JsonNumber(parser.getText());
            case START_OBJECT:
            case START_ARRAY:
                walkContainer(parser);
                return token;
            default:
                return token;
        }
    }

    /** Walks to the end of the current container, checking every key and string inside it. */
    private static void walkContainer(JsonParser parser) throws IOException {
        int depth = 1;
        while (depth > 0) {
            JsonToken token = parser.nextToken();
            if (token == null) {
                throw Errors.invalidJson();
            }
            switch (token) {
                case START_OBJECT, START_ARRAY -> depth++;
                case END_OBJECT, END_ARRAY -> depth--;
                case FIELD_NAME -> checked(parser.currentName());
                case VALUE_STRING -> checked(parser.getText());
                default -> { }
            }
        }
    }

    /** Jackson decodes {@code "\ud800"} into a lone surrogate; the contract calls that invalid JSON. */
    private static String checked(String s) {
        if (hasUnpairedSurrogate(s)) {
            throw Errors.invalidJson();
        }
        return s;
    }

    static boolean hasUnpairedSurrogate(String s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    return true;
                }
            } else if (Character.isLowSurrogate(c)) {
                return true;
            }
        }
        return false;
    }
}
