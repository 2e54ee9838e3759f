package bidbench.json;

import bidbench.model.Bid;
import bidbench.model.Category;
import bidbench.model.ItemDetail;
import bidbench.model.ItemRecord;
import bidbench.model.ItemSummary;
import bidbench.model.Paging;
import bidbench.model.Region;
import bidbench.model.User;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.util.List;

/**
 * The response bodies. Fields are written by hand, in the order of {@code properties} in
 * contract/openapi.yaml, so the wire order never depends on reflection or annotations.
 */
public final class JsonViews {

    private static final byte[] HEALTH = JsonOutput.bytes(json -> {
        json.writeStartObject();
        json.writeStringField("status", "ok");
        json.writeEndObject();
    });
    private static final byte[] READY = JsonOutput.bytes(json -> {
        json.writeStartObject();
        json.writeStringField("status", "ready");
        json.writeEndObject();
    });

    private JsonViews() {}

    /** Shared constant: callers hand it to the wire and never modify it. */
    public static byte[] health() {
        return HEALTH;
    }

    /** Shared constant: callers hand it to the wire and never modify it. */
    public static byte[] ready() {
        return READY;
    }

    public static byte[] error(String code, String message) {
        return JsonOutput.bytes(json -> {
            json.writeStartObject();
            json.writeObjectFieldStart("error");
            json.writeStringField("code", code);
            json.writeStringField("message", message);
            json.writeEndObject();
            json.writeEndObject();
        });
    }

    public static byte[] regions(List<Region> regions) {
        return JsonOutput.bytes(json -> {
            json.writeStartObject();
            json.writeArrayFieldStart("regions");
            for (Region region : regions) {
                json.writeStartObject();
                json.writeNumberField("id", region.id());
                json.writeStringField("name", region.name());
                json.writeEndObject();
            }
            json.writeEndArray();
            json.writeEndObject();
        });
    }

    public static byte[] categories(List<Category> categories) {
        return JsonOutput.bytes(json -> {
            json.writeStartObject();
            json.writeArrayFieldStart("categories");
            for (Category category : categories) {
                json.writeStartObject();
                json.writeNumberField("id", category.id());
                json.writeStringField("name", category.name());
                json.writeEndObject();
            }
            json.writeEndArray();
            json.writeEndObject();
        });
    }

    public static byte[] itemPage(List<ItemSummary> items, Paging paging) {
        return JsonOutput.bytes(json -> {
            json.writeStartObject();
            json.writeArrayFieldStart("items");
            for (ItemSummary item : items) {
                json.writeStartObject();
                json.writeNumberField("id", item.id());
                json.writeNumberField("category_id", item.categoryId());
                json.writeNumberField("seller_id", item.sellerId());
                json.writeStringField("title", item.title());
                json.writeNumberField("initial_price_cents", item.initialPriceCents());
                json.writeNumberField("max_bid_cents", item.maxBidCents());
                json.writeNumberField("bid_count", item.bidCount());
                json.writeStringField("start_time", Timestamps.format(item.startTime()));
                json.writeStringField("end_time", Timestamps.format(item.endTime()));
                json.writeEndObject();
            }
            json.writeEndArray();
            writePaging(json, paging);
            json.writeEndObject();
        });
    }

    public static byte[] itemRecord(ItemRecord item) {
        return JsonOutput.bytes(json -> {
            json.writeStartObject();
            json.writeNumberField("id", item.id());
            json.writeNumberField("category_id", item.categoryId());
            json.writeNumberField("seller_id", item.sellerId());
            json.writeStringField("title", item.title());
            json.writeStringField("description", item.description());
            json.writeNumberField("initial_price_cents", item.initialPriceCents());
            json.writeNumberField("max_bid_cents", item.maxBidCents());
            json.writeNumberField("bid_count", item.bidCount());
            json.writeStringField("start_time", Timestamps.format(item.startTime()));
            json.writeStringField("end_time", Timestamps.format(item.endTime()));
            json.writeEndObject();
        });
    }

    public static byte[] itemDetail(ItemDetail item) {
        return JsonOutput.bytes(json -> {
            json.writeStartObject();
            json.writeNumberField("id", item.id());
            json.writeNumberField("category_id", item.categoryId());
            json.writeNumberField("seller_id", item.sellerId());
            json.writeStringField("seller_nickname", item.sellerNickname());
            json.writeStringField("title", item.title());
            json.writeStringField("description", item.description());
            json.writeNumberField("initial_price_cents", item.initialPriceCents());
            json.writeNumberField("max_bid_cents", item.maxBidCents());
            json.writeNumberField("bid_count", item.bidCount());
            json.writeStringField("start_time", Timestamps.format(item.startTime()));
            json.writeStringField("end_time", Timestamps.format(item.endTime()));
            json.writeArrayFieldStart("top_bids");
            for (Bid bid : item.topBids()) {
                writeBid(json, bid);
            }
            json.writeEndArray();
            json.writeEndObject();
        });
    }

    public static byte[] deleted(int id) {
        return JsonOutput.bytes(json -> {
            json.writeStartObject();
            json.writeNumberField("id", id);
            json.writeBooleanField("deleted", true);
            json.writeEndObject();
        });
    }

    public static byte[] bid(Bid bid) {
        return JsonOutput.bytes(json -> writeBid(json, bid));
    }

    public static byte[] bidPage(List<Bid> bids, Paging paging) {
        return JsonOutput.bytes(json -> {
            json.writeStartObject();
            json.writeArrayFieldStart("bids");
            for (Bid bid : bids) {
                writeBid(json, bid);
            }
            json.writeEndArray();
            writePaging(json, paging);
            json.writeEndObject();
        });
    }

    public static byte[] user(User user) {
        return JsonOutput.bytes(json -> {
            json.writeStartObject();
            json.writeNumberField("id", user.id());
            json.writeStringField("nickname", user.nickname());
            json.writeNumberField("region_id", user.regionId());
            json.writeNumberField("rating", user.rating());
            json.writeStringField("created_at", Timestamps.format(user.createdAt()));
            json.writeEndObject();
        });
    }

    private static void writeBid(JsonGenerator json, Bid bid) throws IOException {
        json.writeStartObject();
        json.writeNumberField("id", bid.id());
        json.writeNumberField("item_id", bid.itemId());
        json.writeNumberField("bidder_id", bid.bidderId());
        json.writeNumberField("amount_cents", bid.amountCents());
        json.writeStringField("created_at", Timestamps.format(bid.createdAt()));
        json.writeEndObject();
    }

    private static void writePaging(JsonGenerator json, Paging paging) throws IOException {
        json.writeNumberField("limit", paging.limit());
        json.writeNumberField("offset", paging.offset());
    }
}
