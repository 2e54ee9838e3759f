package bidbench.model;

import java.time.Instant;
import java.util.List;

/** GET /items/{id}: the item, its seller's nickname and its five highest bids. */
public record ItemDetail(
        int id,
        int categoryId,
        int sellerId,
        String sellerNickname,
        String title,
        String description,
        long initialPriceCents,
        long maxBidCents,
        int bidCount,
        Instant startTime,
        Instant endTime,
        List<Bid> topBids) {

    public ItemDetail withTopBids(List<Bid> bids) {
        return new ItemDetail(id, categoryId, sellerId, sellerNickname, title, description,
                initialPriceCents, maxBidCents, bidCount, startTime, endTime, List.copyOf(bids));
    }
}
