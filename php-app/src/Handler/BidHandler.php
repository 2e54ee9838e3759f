<?php

declare(strict_types=1);

namespace Bidbench\Handler;

use Bidbench\ApiError;
use Bidbench\Db;
use Bidbench\Format;
use Bidbench\Http\Response;
use Bidbench\Sql;
use PDOException;

/** GET and POST /items/{id}/bids. */
final readonly class BidHandler
{
    public function __construct(private Db $db)
    {
    }

    /** The item's bids; only an empty page asks whether the item exists (queries.sql). */
    public function list(int $itemId, int $limit, int $offset): Response
    {
        $rows = $this->db->all(Sql::ListItemBids, [1 => $itemId, 2 => $limit, 3 => $offset]);
        if ($rows === [] && $this->db->one(Sql::ItemExists, [1 => $itemId]) === null) {
            throw ApiError::notFound('item');
        }
        return Response::json(200, [
            'bids' => Format::each($rows, Format::bid(...)),
            'limit' => $limit,
            'offset' => $offset,
        ]);
    }

    /**
     * One READ COMMITTED transaction, exactly as queries.sql: the row lock of lock_item_for_bid
     * serializes concurrent bids on one item, so max_bid_cents and bid_count never lose an update.
     *
     * @param array<string, int|string> $fields validated BidCreate
     */
    public function place(int $itemId, array $fields): Response
    {
        $amount = (int) $fields['amount_cents'];
        $this->db->begin();
        try {
            $item = $this->db->one(Sql::LockItemForBid, [1 => $itemId]) ?? throw ApiError::notFound('item');
            if ($item['open'] !== true) {
                throw ApiError::conflict('auction has ended');
            }
            $minimum = max((int) $item['initial_price_cents'], (int) $item['max_bid_cents'] + 1);
            if ($amount < $minimum) {
                throw ApiError::conflict('bid must be at least ' . $minimum . ' cents');
            }
            try {
                $bid = $this->db->one(Sql::InsertBid, [1 => $itemId, 2 => $fields['bidder_id'], 3 => $amount]);
            } catch (PDOException $e) {
                throw Db::sqlState($e) === '23503' ? ApiError::notFound('bidder') : $e;
            }
            $this->db->one(Sql::RaiseItemMaxBid, [1 => $itemId, 2 => $amount]);
            $this->db->commit();
        } catch (\Throwable $e) {
            $this->db->rollBack();
            throw $e;
        }
        return Response::json(201, Format::bid($bid ?? throw new \LogicException('INSERT ... RETURNING gave no row')));
    }
}
