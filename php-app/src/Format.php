<?php

declare(strict_types=1);

namespace Bidbench;

/**
 * Database rows to response objects, field by field in the order of `properties` in openapi.yaml
 * (the order is the contract, so it is spelled out here rather than inherited from a SELECT list).
 * PDO pgsql returns integer and bigint columns as PHP ints, so ids and cents are JSON integers as they are.
 */
final class Format
{
    /**
     * @param array<string, mixed> $row
     * @return array<string, mixed>
     */
    public static function named(array $row): array
    {
        return ['id' => $row['id'], 'name' => $row['name']];
    }

    /**
     * ItemSummary.
     *
     * @param array<string, mixed> $row
     * @return array<string, mixed>
     */
    public static function itemSummary(array $row): array
    {
        return [
            'id' => $row['id'],
            'category_id' => $row['category_id'],
            'seller_id' => $row['seller_id'],
            'title' => $row['title'],
            'initial_price_cents' => $row['initial_price_cents'],
            'max_bid_cents' => $row['max_bid_cents'],
            'bid_count' => $row['bid_count'],
            'start_time' => Json::timestamp($row['start_time']),
            'end_time' => Json::timestamp($row['end_time']),
        ];
    }

    /**
     * ItemRecord.
     *
     * @param array<string, mixed> $row
     * @return array<string, mixed>
     */
    public static function itemRecord(array $row): array
    {
        return [
            'id' => $row['id'],
            'category_id' => $row['category_id'],
            'seller_id' => $row['seller_id'],
            'title' => $row['title'],
            'description' => $row['description'],
            'initial_price_cents' => $row['initial_price_cents'],
            'max_bid_cents' => $row['max_bid_cents'],
            'bid_count' => $row['bid_count'],
            'start_time' => Json::timestamp($row['start_time']),
            'end_time' => Json::timestamp($row['end_time']),
        ];
    }

    /**
     * ItemDetail: the item, its seller's nickname and its top bids (already formatted).
     *
     * @param array<string, mixed> $row
     * @param list<array<string, mixed>> $topBids
     * @return array<string, mixed>
     */
    public static function itemDetail(array $row, array $topBids): array
    {
        return [
            'id' => $row['id'],
            'category_id' => $row['category_id'],
            'seller_id' => $row['seller_id'],
            'seller_nickname' => $row['nickname'],
            'title' => $row['title'],
            'description' => $row['description'],
            'initial_price_cents' => $row['initial_price_cents'],
            'max_bid_cents' => $row['max_bid_cents'],
            'bid_count' => $row['bid_count'],
            'start_time' => Json::timestamp($row['start_time']),
            'end_time' => Json::timestamp($row['end_time']),
            'top_bids' => $topBids,
        ];
    }

    /**
     * Bid.
     *
     * @param array<string, mixed> $row
     * @return array<string, mixed>
     */
    public static function bid(array $row): array
    {
        return [
            'id' => $row['id'],
            'item_id' => $row['item_id'],
            'bidder_id' => $row['bidder_id'],
            'amount_cents' => $row['amount_cents'],
            'created_at' => Json::timestamp($row['created_at']),
        ];
    }

    /**
     * User.
     *
     * @param array<string, mixed> $row
     * @return array<string, mixed>
     */
    public static function user(array $row): array
    {
        return [
            'id' => $row['id'],
            'nickname' => $row['nickname'],
            'region_id' => $row['region_id'],
            'rating' => $row['rating'],
            'created_at' => Json::timestamp($row['created_at']),
        ];
    }

    /**
     * @param list<array<string, mixed>> $rows
     * @param callable(array<string, mixed>): array<string, mixed> $format
     * @return list<array<string, mixed>>
     */
    public static function each(array $rows, callable $format): array
    {
        return array_map($format, $rows);
    }
}
