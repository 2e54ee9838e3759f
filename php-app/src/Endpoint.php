<?php

declare(strict_types=1);

namespace Bidbench;

/** One operation of contract/openapi.yaml: what the router finds and App dispatches on. */
enum Endpoint
{
    case Health;
    case Ready;
    case ListRegions;
    case ListCategories;
    case ListCategoryItems;
    case CreateItem;
    case GetItem;
    case UpdateItem;
    case DeleteItem;
    case ListItemBids;
    case PlaceBid;
    case CreateUser;
    case GetUser;

    /** The two list routes read `limit` and `offset`; every other route ignores the query string. */
    public function isPaged(): bool
    {
        return $this === self::ListCategoryItems || $this === self::ListItemBids;
    }

    /**
     * The request schema of a POST or PUT, in `properties` order (the order fields are checked in).
     *
     * @return array<string, Field>|null
     */
    public function bodySchema(): ?array
    {
        return match ($this) {
            self::CreateItem => [
                'seller_id' => Field::Id,
                'category_id' => Field::Id,
                'title' => Field::Title,
                'description' => Field::Description,
                'initial_price_cents' => Field::Cents,
                'duration_seconds' => Field::Duration,
            ],
            self::UpdateItem => ['title' => Field::Title, 'description' => Field::Description],
            self::PlaceBid => ['bidder_id' => Field::Id, 'amount_cents' => Field::Cents],
            self::CreateUser => ['nickname' => Field::Nickname, 'region_id' => Field::Id],
            default => null,
        };
    }
}
