<?php

declare(strict_types=1);

namespace Bidbench\Handler;

use Bidbench\ApiError;
use Bidbench\Db;
use Bidbench\Format;
use Bidbench\Http\Response;
use Bidbench\Sql;
use PDOException;

/** POST /users and GET /users/{id}. */
final readonly class UserHandler
{
    public function __construct(private Db $db)
    {
    }

    /** @param array<string, int|string> $fields validated UserCreate */
    public function create(array $fields): Response
    {
        try {
            $row = $this->db->one(Sql::CreateUser, [1 => $fields['nickname'], 2 => $fields['region_id']]);
        } catch (PDOException $e) {
            throw match (Db::sqlState($e)) {
                '23505' => ApiError::conflict('nickname already taken'),
                '23503' => ApiError::notFound('region'),
                default => $e,
            };
        }
        return Response::json(201, Format::user($row ?? throw new \LogicException('INSERT ... RETURNING gave no row')));
    }

    public function get(int $id): Response
    {
        $row = $this->db->one(Sql::GetUser, [1 => $id]) ?? throw ApiError::notFound('user');
        return Response::json(200, Format::user($row));
    }
}
