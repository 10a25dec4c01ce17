import { CreateProductRequest, ListQuery, OrderPathParams } from '@seller-api/contracts';
import { parseOrThrow, route, sellerScope, type Runtime } from '@seller-api/service-kit';
import type { Express } from 'express';
import { createProduct, getProduct, listProducts } from '../db/products';
import { presentProduct } from './presenters';
import { createRecordRoute, listRecordsRoute } from './seller-records';

/** The seller's products: create, list, read one. */
export function mountProductRoutes(app: Express, runtime: Runtime): void {
  app.post(
    '/sellers/products/',
    createRecordRoute(runtime, {
      schema: CreateProductRequest,
      invalid: 'Invalid product.',
      create: createProduct,
      present: presentProduct,
      created: 'Product created.',
    }),
  );
  app.get(
    '/sellers/products/',
    listRecordsRoute(runtime, {
      query: ListQuery,
      list: listProducts,
      present: presentProduct,
      listed: 'Products retrieved.',
    }),
  );
  app.get(
    '/sellers/products/:uuid/',
    route(async (req, res) => {
      const id = parseOrThrow(OrderPathParams, req.params, 'Invalid product id.').uuid;
      res.json({
        message: 'Product retrieved.',
        data: presentProduct(await getProduct(runtime.orm.em.fork(), sellerScope(req), id)),
      });
    }),
  );
}
