package bidbench.model;

/** The locked item row a bid is checked against (lock_item_for_bid). */
public record BidTarget(long initialPriceCents, long maxBidCents, boolean open) {

    /** The smallest acceptable bid: at least the initial price, and above the current maximum. */
    public long minimumBidCents() {
        return Math.max(initialPriceCents, maxBidCents + 1);
    }
}
