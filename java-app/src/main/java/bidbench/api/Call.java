package bidbench.api;

import bidbench.model.Paging;
import bidbench.timing.RequestTiming;
import bidbench.validation.Body;

/**
 * A request that passed contract steps 1 to 7: the path id (0 on routes without one), the page (null
 * unless the endpoint lists), and the validated body (null unless it takes one).
 */
public record Call(int id, Paging paging, Body body, RequestTiming timing) {}
