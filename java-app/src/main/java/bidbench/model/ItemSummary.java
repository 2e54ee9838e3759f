package bidbench.model;

import java.time.Instant;

/** One row of a category's open items: an item without its description. */
public record ItemSummary(
        int id,
        int categoryId,
        int sellerId,
        String title,
        long initialPriceCents,
        long maxBidCents,
        int bidCount,
        Instant startTime,
        Instant endTime) {}
