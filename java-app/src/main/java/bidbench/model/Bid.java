package bidbench.model;

import java.time.Instant;

public record Bid(int id, int itemId, int bidderId, long amountCents, Instant createdAt) {}
