<?php

declare(strict_types=1);

namespace Bidbench\Handler;

use Bidbench\Db;
use Bidbench\Format;
use Bidbench\Http\Response;
use Bidbench\Sql;

/** GET /regions. */
final readonly class RegionHandler
{
    public function __construct(private Db $db)
    {
    }

    public function list(): Response
    {
        $rows = $this->db->all(Sql::ListRegions);
        return Response::json(200, ['regions' => Format::each($rows, Format::named(...))]);
    }
}
