<?php

declare(strict_types=1);

namespace Bidbench\Handler;

use Bidbench\Db;
use Bidbench\Http\Response;
use Bidbench\Sql;

/** GET /health (never touches the database) and GET /ready (SELECT 1). */
final readonly class HealthHandler
{
    public function __construct(private Db $db)
    {
    }

    public function health(): Response
    {
        return Response::json(200, ['status' => 'ok']);
    }

    public function ready(): Response
    {
        $this->db->one(Sql::Ready);
        return Response::json(200, ['status' => 'ready']);
    }
}
