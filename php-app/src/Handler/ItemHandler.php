<?php

declare(strict_types=1);

namespace Bidbench\Handler;

use Bidbench\ApiError;
use Bidbench\Db;
use Bidbench\Format;
use Bidbench\Http\Response;
use Bidbench\Sql;
use PDOException;

/** POST /items, GET, PUT and DELETE /items/{id}. */
final readonly class ItemHandler
{
    /** @param bool $perField BIDBENCH_UNFAIR_PER_FIELD=1: read the item one column per statement */
    public function __construct(private Db $db, private bool $perField = false)
    {
    }

    /** @param array<string, int|string> $fields validated ItemCreate */
    public function create(array $fields): Response
    {
        try {
            $row = $this->db->one(Sql::CreateItem, [
                1 => $fields['seller_id'],
                2 => $fields['category_id'],
                3 => $fields['title'],
                4 => $fields['description'],
                5 => $fields['initial_price_cents'],
                6 => $fields['duration_seconds'],
            ]);
        } catch (PDOException $e) {
            throw Db::sqlState($e) === '23503' ? ApiError::notFound('seller or category') : $e;
        }
        return Response::json(201, Format::itemRecord($row ?? throw new \LogicException('INSERT ... RETURNING gave no row')));
    }

    /** The item, then its five highest bids; top_bids is not run for a missing item. */
    public function get(int $id): Response
    {
        $item = ($this->perField ? $this->itemPerField($id) : $this->db->one(Sql::GetItem, [1 => $id]))
            ?? throw ApiError::notFound('item');
        $bids = $this->db->all(Sql::TopBids, [1 => $id]);
        return Response::json(200, Format::itemDetail($item, Format::each($bids, Format::bid(...))));
    }

    /**
     * get_item's row, assembled from one statement per column (the deliberately unequal variant); null
     * as soon as one finds no row, so a missing item costs one statement and an item deleted meanwhile
     * is the same 404.
     *
     * @return array<string, mixed>|null
     */
    private function itemPerField(int $id): ?array
    {
        $row = [];
        foreach (Sql::PER_FIELD as $sql) {
            $column = $this->db->one($sql, [1 => $id]);
            if ($column === null) {
                return null;
            }
            $row += $column;
        }
        return $row;
    }

    /** @param array<string, int|string> $fields validated ItemUpdate */
    public function update(int $id, array $fields): Response
    {
        $row = $this->db->one(Sql::UpdateItem, [1 => $id, 2 => $fields['title'], 3 => $fields['description']])
            ?? throw ApiError::notFound('item');
        return Response::json(200, Format::itemRecord($row));
    }

    /** Bids go with the item (ON DELETE CASCADE). */
    public function delete(int $id): Response
    {
        $row = $this->db->one(Sql::DeleteItem, [1 => $id]) ?? throw ApiError::notFound('item');
        return Response::json(200, ['id' => $row['id'], 'deleted' => true]);
    }
}
