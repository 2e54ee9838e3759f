package bidbench.model;

import java.time.Instant;

public record User(int id, String nickname, int regionId, int rating, Instant createdAt) {}
