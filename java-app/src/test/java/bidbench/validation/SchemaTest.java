package bidbench.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import bidbench.http.ApiException;
import bidbench.json.StrictJson;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SchemaTest {

    private static Body validate(Schema schema, String json) {
        return schema.validate(StrictJson.parseObject(json.getBytes(StandardCharsets.UTF_8)));
    }

    private static void assertMessage(String message, Schema schema, String json) {
        ApiException e = assertThrows(ApiException.class, () -> validate(schema, json));
        assertEquals(400, e.status());
        assertEquals(message, e.getMessage());
    }

    @Test
    void itemCreateTypedValues() {
        Body body = validate(Schema.ITEM_CREATE, "{\"duration_seconds\":6e1,\"seller_id\":1,\"category_id\":2.0,"
                + "\"title\":\"t\",\"description\":\"\",\"initial_price_cents\":100000000000}");
        assertEquals(1, body.integer("seller_id"));
        assertEquals(2, body.integer("category_id"));
        assertEquals("t", body.text("title"));
        assertEquals("", body.text("description"));
        assertEquals(100_000_000_000L, body.cents("initial_price_cents"));
        assertEquals(60, body.integer("duration_seconds"));
    }

    @Test
    void unknownFieldsBeforeMissingOrInvalid() {
        assertMessage("request body has unknown fields", Schema.BID_CREATE, "{\"bidder_id\":\"x\",\"extra\":1}");
        assertMessage("request body has unknown fields", Schema.BID_CREATE, "{\"Bidder_id\":1,\"amount_cents\":1}");
    }

    @Test
    void fieldsInPropertiesOrder() {
        // seller_id comes first in openapi.yaml, so its problem is reported even though title is also wrong.
        assertMessage("missing field: seller_id", Schema.ITEM_CREATE, "{\"title\":5}");
        assertMessage("invalid field: seller_id", Schema.ITEM_CREATE, "{\"seller_id\":0,\"title\":5}");
        assertMessage("missing field: category_id", Schema.ITEM_CREATE, "{\"seller_id\":1}");
        assertMessage("missing field: amount_cents", Schema.BID_CREATE, "{\"bidder_id\":1}");
        assertMessage("invalid field: nickname", Schema.USER_CREATE, "{\"region_id\":\"1\",\"nickname\":\"ab\"}");
        assertMessage("missing field: description", Schema.ITEM_UPDATE, "{\"title\":\"t\"}");
        assertMessage("missing field: nickname", Schema.USER_CREATE, "{}");
    }

    @Test
    void nullIsInvalidNotMissing() {
        assertMessage("invalid field: bidder_id", Schema.BID_CREATE, "{\"bidder_id\":null,\"amount_cents\":1}");
    }

    @ParameterizedTest(name = "bidder_id {0} valid={1}")
    @CsvSource(delimiter = '|', value = {
        "1|true", "2147483647|true", "1.0000000000000001|true", "5.0|true", "5e0|true", "0.5e1|true", "50E-1|true", "1.000000000000000000000|true",
        "0|false", "-1|false", "-0|false", "0.0|false", "2147483648|false", "5.5|false", "1e400|false", "1e-400|false",
        "99999999999999999999999999|false", "1e99999999999|false", "\"5\"|false", "true|false", "[1]|false",
        "{}|false", "null|false",
    })
    void idIsAnIntegralNumberInRange(String raw, boolean valid) {
        String json = "{\"bidder_id\":" + raw + ",\"amount_cents\":1}";
        if (valid) {
            validate(Schema.BID_CREATE, json);
        } else {
            assertMessage("invalid field: bidder_id", Schema.BID_CREATE, json);
        }
    }

    @ParameterizedTest(name = "amount_cents {0} valid={1}")
    @CsvSource(delimiter = '|', value = {
        "1|true", "100000000000|true", "1e11|true", "100000000000.0|true", "0|false", "100000000001|false",
        "1e12|false", "-5|false", "0.999|false",
    })
    void centsRange(String raw, boolean valid) {
        String json = "{\"bidder_id\":1,\"amount_cents\":" + raw + "}";
        if (valid) {
            validate(Schema.BID_CREATE, json);
        } else {
            assertMessage("invalid field: amount_cents", Schema.BID_CREATE, json);
        }
    }

    @ParameterizedTest(name = "duration_seconds {0} valid={1}")
    @CsvSource(delimiter = '|', value = {"60|true", "2592000|true", "59|false", "2592001|false", "60.5|false"})
    void durationRange(String raw, boolean valid) {
        String json = "{\"seller_id\":1,\"category_id\":1,\"title\":\"t\",\"description\":\"\","
                + "\"initial_price_cents\":1,\"duration_seconds\":" + raw + "}";
        if (valid) {
            validate(Schema.ITEM_CREATE, json);
        } else {
            assertMessage("invalid field: duration_seconds", Schema.ITEM_CREATE, json);
        }
    }

    @Test
    void titleCountsCodePoints() {
        String emoji = "\\ud83d\\ude00"; // one code point, two UTF-16 units, four UTF-8 bytes
        validate(Schema.ITEM_UPDATE, "{\"title\":\"" + emoji.repeat(200) + "\",\"description\":\"\"}");
        validate(Schema.ITEM_UPDATE, "{\"title\":\"" + "é".repeat(200) + "\",\"description\":\"\"}");
        assertMessage("invalid field: title", Schema.ITEM_UPDATE,
                "{\"title\":\"" + emoji.repeat(201) + "\",\"description\":\"\"}");
        assertMessage("invalid field: title", Schema.ITEM_UPDATE, "{\"title\":\"\",\"description\":\"\"}");
        assertMessage("invalid field: title", Schema.ITEM_UPDATE, "{\"title\":\"a\\u0000\",\"description\":\"\"}");
        assertMessage("invalid field: title", Schema.ITEM_UPDATE, "{\"title\":1,\"description\":\"\"}");
    }

    @Test
    void descriptionLength() {
        validate(Schema.ITEM_UPDATE, "{\"title\":\"t\",\"description\":\"" + "x".repeat(10_000) + "\"}");
        assertMessage("invalid field: description", Schema.ITEM_UPDATE,
                "{\"title\":\"t\",\"description\":\"" + "x".repeat(10_001) + "\"}");
        assertMessage("invalid field: description", Schema.ITEM_UPDATE, "{\"title\":\"t\",\"description\":\"\\u0000\"}");
        assertMessage("invalid field: description", Schema.ITEM_UPDATE, "{\"title\":\"t\",\"description\":null}");
    }

    @ParameterizedTest(name = "nickname {0} valid={1}")
    @CsvSource(delimiter = '|', value = {
        "abc|true", "A_b_9|true", "abcdefghijabcdefghijabcdefghij12|true", "ab|false",
        "abcdefghijabcdefghijabcdefghij123|false", "a-b|false", "a b|false", "ünï|false", "abc\\n|false",
    })
    void nicknamePattern(String nickname, boolean valid) {
        String json = "{\"nickname\":\"" + nickname + "\",\"region_id\":1}";
        if (valid) {
            assertEquals(nickname, validate(Schema.USER_CREATE, json).text("nickname"));
        } else {
            assertMessage("invalid field: nickname", Schema.USER_CREATE, json);
        }
    }
}
