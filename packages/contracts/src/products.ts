import { z } from 'zod';
import { strictInput } from './strict';
import { ListQuery, MAX_AMOUNT, cents, dataResponse, datetime, httpUrl, listResponse, uuid } from './common';

/** PHYSICAL products need a shipping address on the order; DIGITAL ones do not (docs/orders.md). */
export const ProductType = z.enum(['PHYSICAL', 'DIGITAL']);
export type ProductType = z.infer<typeof ProductType>;

/** `POST /sellers/products/` body (docs/orders.md, "Products"). */
export const CreateProductRequest = strictInput(
  z.object({
    name: z.string().trim().min(1).max(255),
    price: cents.max(MAX_AMOUNT),
    images: z.array(httpUrl).default([]),
    type: ProductType,
    commission_unit_amount: cents.max(MAX_AMOUNT).default(0),
    producer_name: z.string().trim().min(1).max(255).nullable().optional(),
  }),
);
export type CreateProductRequest = z.infer<typeof CreateProductRequest>;
export type CreateProductInput = z.input<typeof CreateProductRequest>;

/** Product as every product route shows it. */
export const Product = z.object({
  uuid,
  name: z.string(),
  price: cents,
  images: z.array(z.string()),
  type: ProductType,
  commission_unit_amount: cents,
  producer_name: z.string().nullable(),
  created_at: datetime,
});
export type Product = z.infer<typeof Product>;

export const ProductResponse = dataResponse(Product);
export type ProductResponse = z.infer<typeof ProductResponse>;

export const ProductList = listResponse(Product);
export type ProductList = z.infer<typeof ProductList>;
export const ProductListResponse = dataResponse(ProductList);
export type ProductListResponse = z.infer<typeof ProductListResponse>;

/** `GET /sellers/products/` query: the common list parameters. */
export const ProductListQuery = strictInput(ListQuery);
export type ProductListQuery = z.infer<typeof ProductListQuery>;
