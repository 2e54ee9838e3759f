package bidbench.api;

import bidbench.model.Paging;
import bidbench.timing.RequestTiming;
import bidbench.validation.Body;

/**
 * A request that passed contract steps 1 to 7: the path id (0 on routes without one), the page (null
 * unless the endpoint lists), the validated body (null unless it takes one), and when it arrived
 * ({@link System#nanoTime()} scale), from which its 5 s pool checkout budget is counted.
 */
public record Call(int id, Paging paging, Body body, RequestTiming timing, long arrivedNanos) {}
