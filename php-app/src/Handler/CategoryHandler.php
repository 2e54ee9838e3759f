<?php

declare(strict_types=1);

namespace Bidbench\Handler;

use Bidbench\ApiError;
use Bidbench\Db;
use Bidbench\Format;
use Bidbench\Http\Response;
use Bidbench\Sql;

/** GET /categories and GET /categories/{id}/items. */
final readonly class CategoryHandler
{
    public function __construct(private Db $db)
    {
    }

    public function list(): Response
    {
        $rows = $this->db->all(Sql::ListCategories);
        return Response::json(200, ['categories' => Format::each($rows, Format::named(...))]);
    }

    /** The category's open items; only an empty page asks whether the category exists (queries.sql). */
    public function items(int $id, int $limit, int $offset): Response
    {
        $rows = $this->db->all(Sql::ListCategoryItems, [1 => $id, 2 => $limit, 3 => $offset]);
        if ($rows === [] && $this->db->one(Sql::CategoryExists, [1 => $id]) === null) {
            throw ApiError::notFound('category');
        }
        return Response::json(200, [
            'items' => Format::each($rows, Format::itemSummary(...)),
            'limit' => $limit,
            'offset' => $offset,
        ]);
    }
}
