package bidbench.model;

import java.time.Instant;

/** An item as the write endpoints return it (POST /items, PUT /items/{id}). */
public record ItemRecord(
        int id,
        int categoryId,
        int sellerId,
        String title,
        String description,
        long initialPriceCents,
        long maxBidCents,
        int bidCount,
        Instant startTime,
        Instant endTime) {}
